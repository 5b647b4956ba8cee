"""Find the profiles in a logdir: runs, sessions and host files, by asking the registered formats which files are theirs."""
