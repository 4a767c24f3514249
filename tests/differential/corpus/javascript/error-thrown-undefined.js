// mode: script
throw undefined;
