#!/usr/bin/env python3
"""The documentation of each filter's options against the options
themselves: what ffmpeg -h filter=NAME lists and what doc/NAME.texi says.

For each of the three filters:
  options    every AVOption has an @item (or @itemx) in the section's
             option tables (those before its first @subsection), and every
             such @item is an AVOption;
  constants  every named value of an option (auto, curve, dct, ...) is
             written in the section (@samp{value} or @item value);
  commands   the options the text names as commands ("The options ... can
             be changed at run time with commands", or "This filter
             supports the ... options as commands") are exactly those
             flagged as runtime parameters (T);
  timeline   the text says "supports the timeline" exactly where the
             filter supports it;
  defaults   where an option's own item says "Default X." (a number,
             0x..., true or false), X is the AVOption's default, and the
             value whose item says "Default." is the option's default.

Usage: options_doc.py [--ffmpeg PATH] [--doc DIR]
Environment: FFMPEG, as for the other tests. Standard library only.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import ffmpeg  # noqa: E402
from testlib.report import Tally  # noqa: E402

FILTERS = ("nlmeans_gpu", "bm3d_gpu", "vbm3d_gpu")
# "   name   <type>   ..FV.....T. help" and "     value   N   ..FV.....T. help"
OPTION_RE = re.compile(r"^   ([A-Za-z0-9_]+)\s+<[a-z0-9]+>\s+([.A-Z]{11}) ", re.M)
DEFAULT_RE = re.compile(r"\(default ([^)]*)\)\s*$")
CONSTANT_RE = re.compile(r"^     ([A-Za-z0-9_]+)\s+(?:-?[0-9]+\s+)?([.A-Z]{11}) ", re.M)
RUNTIME_FLAG = 9            # the T of ..FV.....T.
COMMAND_SENTENCE_RE = re.compile(
    r"(?:The options|This filter supports the)\s+((?:@option\{[a-z0-9_]+\}[,\s]*(?:and\s+)?)+)"
    r"(?:options as commands|can be changed at run time)")


def parse_help(text):
    """(options, runtime options, constants, defaults) from ffmpeg -h
    filter=NAME; defaults maps an option to its default as printed."""
    options, runtime, constants, defaults = set(), set(), set(), {}
    body = text.split("AVOptions:", 1)[1]
    for line in body.splitlines():
        m = OPTION_RE.match(line + " ")
        if m:
            options.add(m.group(1))
            if m.group(2)[RUNTIME_FLAG] == "T":
                runtime.add(m.group(1))
            d = DEFAULT_RE.search(line)
            if d:
                defaults[m.group(1)] = d.group(1).strip('"')
            continue
        m = CONSTANT_RE.match(line + " ")
        if m:
            constants.add(m.group(1))
    return options, runtime, constants, defaults


def option_entries(texi):
    """The entries of the section's option tables: (names, text, values),
    names those of the @item/@itemx lines that share the text, values
    (name, text) of the @table @samp nested in it."""
    head = texi.split("@subsection", 1)[0]
    entries, tables, entry = [], [], None
    for line in head.splitlines():
        if line.startswith("@table"):
            tables.append(line.split()[1] if len(line.split()) > 1 else "")
            continue
        if line.startswith("@end table"):
            tables.pop()
            continue
        m = re.match(r"@itemx? (\S+)\s*$", line)
        if tables == ["@option"] and m:
            if entry is None or entry[1]:
                entry = ([], [], [])
                entries.append(entry)
            entry[0].append(m.group(1))
        elif len(tables) == 2 and tables[0] == "@option" and entry is not None:
            if m:
                entry[2].append([m.group(1), ""])
            elif entry[2]:
                entry[2][-1][1] += line + " "
        elif tables == ["@option"] and entry is not None:
            entry[1].append(line)
    return [(names, " ".join(text), values) for names, text, values in entries]


def option_items(texi):
    """The names of the @item and @itemx lines of the section's option
    tables (not those of the nested tables, which list an option's values)."""
    return {n for names, _, _ in option_entries(texi) for n in names}


def same_default(said, printed):
    """Whether 'Default X' in the text is the default ffmpeg prints."""
    if said in ("true", "false") or printed in ("true", "false"):
        return said == printed
    try:
        return float(int(said, 0) if said.startswith("0x") else said) == float(printed)
    except ValueError:
        return said == printed


def check_defaults(t, name, texi, defaults):
    """The defaults the option entries state, against ffmpeg's."""
    stated, wrong = 0, []
    for names, text, values in option_entries(texi):
        m = re.search(r"Default (-?[0-9][0-9.x]*[0-9a-f]|-?[0-9]|true|false)(?:[.:,;]| \()", text)
        if len(names) == 1 and m and names[0] in defaults:
            stated += 1
            if not same_default(m.group(1), defaults[names[0]]):
                wrong.append("%s: %s, not %s" % (names[0], m.group(1), defaults[names[0]]))
        marked = [v for v, vtext in values if re.search(r"(^|\. )Default\.", vtext)]
        if len(names) == 1 and marked and names[0] in defaults:
            stated += 1
            if marked != [defaults[names[0]]]:
                wrong.append("%s: %s marked, not %s" % (names[0], "/".join(marked),
                                                         defaults[names[0]]))
    t.result(stated and not wrong, "%s defaults: %d stated in the options' own items, %s" % (
        name, stated, "each ffmpeg's" if not wrong else "; ".join(wrong)))


def command_options(texi):
    """The options the text names as commands, or None without the sentence."""
    text = re.sub(r"\s+", " ", texi)
    m = COMMAND_SENTENCE_RE.search(text)
    if not m:
        return None
    return set(re.findall(r"@option\{([a-z0-9_]+)\}", m.group(1)))


def names(s):
    return ", ".join(sorted(s)) or "none"


def check(t, binary, doc_dir, name):
    help_text = ffmpeg.filter_help(binary, name)
    path = os.path.join(doc_dir, name + ".texi")
    t.cases += 5
    if help_text is None:
        t.fail("%s: not in this ffmpeg" % name)
        return
    with open(path) as f:
        texi = f.read()
    options, runtime, constants, defaults = parse_help(help_text)
    items = option_items(texi)
    t.result(options and options == items,
             "%s options: %d AVOptions, %d documented%s" % (
                 name, len(options), len(items & options),
                 "" if options == items else
                 "; undocumented: %s; documented, no such option: %s" % (
                     names(options - items), names(items - options))))
    missing = {c for c in constants
               if not re.search(r"(@samp\{%s\}|@code\{[a-z0-9_]+=%s\}|^@item %s\b)" % (c, c, c),
                                texi, re.M)}
    t.result(not missing, "%s constants: %d named values, %s" % (
        name, len(constants),
        "each written in the section" if not missing else "not written: " + names(missing)))
    said = command_options(texi)
    if said is None:
        t.fail("%s commands: no sentence naming the options that are commands" % name)
    else:
        t.result(said == runtime, "%s commands: %s%s" % (
            name, names(runtime),
            "" if said == runtime else " are runtime options; the text names %s" % names(said)))
    check_defaults(t, name, texi, defaults)
    timeline = "support for timeline" in help_text
    says = "supports the timeline" in re.sub(r"\s+", " ", texi)
    t.result(timeline == says, "%s timeline: %s, %s" % (
        name, "supported" if timeline else "not supported",
        "the text says so" if timeline == says else "the text says otherwise"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ffmpeg", default=ffmpeg.binary_from_env())
    ap.add_argument("--doc", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "doc"))
    args = ap.parse_args()
    t = Tally()
    for name in FILTERS:
        check(t, args.ffmpeg, args.doc, name)
    return t.summary("options_doc.py")


if __name__ == "__main__":
    sys.exit(main())
