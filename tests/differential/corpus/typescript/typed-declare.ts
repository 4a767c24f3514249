// mode: script
declare const BUILD_ID: string | undefined;
declare function externalThing(): void;
declare global {
  var appName: string;
}
globalThis.appName = "typed";
console.log(typeof BUILD_ID === "undefined" ? "no build id" : BUILD_ID, globalThis.appName);
