"""A process that maps a file, reads every page of it and holds still.

Its PSS of the file's pages is their size over the number of processes mapping
them: when the others that map it exit, its PSS grows though it allocated
nothing (as with the pages of PyTorch's libraries on a busy machine).

usage: mapped_file.py FILE SECONDS"""
import mmap
import sys
import time

with open(sys.argv[1], "rb") as f:
    pages = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
touched = sum(pages[i] for i in range(0, len(pages), mmap.PAGESIZE))
time.sleep(float(sys.argv[2]))
