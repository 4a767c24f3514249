// mode: script
throw ["a", 1, { nested: true }];
