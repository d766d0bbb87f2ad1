"""What the Python tests share (standard library only, so that they run on
any python3):

  testlib.ffmpeg  the ffmpeg binary and the OpenCL device options, running a
                  command with a time limit (Result) and telling how it ended
                  (classify: ok, timeout, signal, report, error), the FFmpeg
                  class for raw frames, filter help, framemd5 lists
  testlib.images  PGM/PPM read and write (8 and 16 bits), 16-bit samples,
                  PSNR
  testlib.tools   the C tools of tests/tools (awgn, cmpimg)
  testlib.tmp     work folders: --work DIR kept, else a temporary one removed
                  at the end unless --keep or KEEP_TMP=1
  testlib.report  log, the ok/FAIL lines with their counts and the summary
                  line (Tally), the table and verdict of the quality tests
                  (finish)

A script imports it whatever the current folder is, with the tests/ folder
on the path:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tests/
    from testlib.ffmpeg import FFmpeg
"""
