// mode: script
Promise.reject(42);
