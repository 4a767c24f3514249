// mode: script
class TypedEmitter<Events extends Record<string, unknown[]>> {
  private handlers: { [E in keyof Events]?: ((...args: Events[E]) => void)[] } = {};
  on<E extends keyof Events>(event: E, fn: (...args: Events[E]) => void): void {
    (this.handlers[event] ??= []).push(fn);
  }
  emit<E extends keyof Events>(event: E, ...args: Events[E]): void {
    for (const fn of this.handlers[event] ?? []) fn(...args);
  }
}
const em = new TypedEmitter<{ msg: [string, number] }>();
em.on("msg", (text, n) => console.log(text.repeat(n)));
em.emit("msg", "ab", 3);
