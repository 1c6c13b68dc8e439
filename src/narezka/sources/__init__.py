"""Where a corpus comes from: a folder, a git repository, a site."""
