"""Getting a guest: each language's command line, starting it (spawned,
forked by the fork server, or by a launcher elsewhere), the warm pool."""
