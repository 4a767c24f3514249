"""What confines a guest: the isolation profiles and bwrap, cgroups,
the seccomp filter, Landlock, and where tether's own files are."""
