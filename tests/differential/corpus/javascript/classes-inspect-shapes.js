// mode: script
class Empty {}
class WithFields {
  a = 1;
  b = "two";
  c = [3];
}
class Child extends WithFields {
  d = { e: null };
}
console.log(new Empty());
console.log(new WithFields());
console.log(new Child());
console.log({ instance: new Child() });
