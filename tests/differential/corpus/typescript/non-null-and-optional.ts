// mode: script
interface Node2 { value: number; next?: Node2 }
const list: Node2 = { value: 1, next: { value: 2, next: { value: 3 } } };
let cur: Node2 | undefined = list;
const values: number[] = [];
while (cur) {
  values.push(cur.value);
  cur = cur.next;
}
console.log(values, list.next!.next!.value, list.next?.next?.next?.value);
const el = new Map<string, number>([["a", 1]]).get("a")!;
console.log(el + 1);
