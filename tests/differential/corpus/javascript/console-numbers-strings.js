// mode: script
console.log(0.1 * 3, 1e21, 1e-7, 123456789012345680000, -1e-7, 2 ** 53 + 1);
console.log("quote ' in string", ['quote \' in array'], ["double \" quote"], ["both ' and \""]);
console.log(["new\nline", "tab\there", "uni\u0001code"]);
console.log({ empty: "", space: " ", zero: 0, neg: -0, nan: NaN });
