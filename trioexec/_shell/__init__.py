"""Reading a bash command line: what it runs, reads and writes. Pure: no trio."""
