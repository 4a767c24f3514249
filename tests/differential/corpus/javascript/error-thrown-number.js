// mode: script
throw 404;
