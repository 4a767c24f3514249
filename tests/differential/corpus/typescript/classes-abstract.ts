// mode: script
abstract class Repo<T extends { id: number }> {
  protected items = new Map<number, T>();
  abstract validate(item: T): boolean;
  save(item: T): void {
    if (!this.validate(item)) throw new Error(`invalid item ${item.id}`);
    this.items.set(item.id, item);
  }
  all(): T[] {
    return [...this.items.values()];
  }
}
interface Note { id: number; text: string }
class NoteRepo extends Repo<Note> {
  validate(n: Note) {
    return n.text.length > 0;
  }
}
const repo = new NoteRepo();
repo.save({ id: 1, text: "hi" });
console.log(repo.all());
repo.save({ id: 2, text: "" });
