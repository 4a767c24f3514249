const bytes = await echo(new Uint8Array([1, 2]))
return [bytes.length, bytes.buffer.byteLength]
