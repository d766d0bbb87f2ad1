# GPU denoise filters
