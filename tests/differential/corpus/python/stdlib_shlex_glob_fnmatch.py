import fnmatch
import shlex

print(shlex.split('cmd --name "two words" \'single\' plain'))
print(shlex.quote("it's here"), shlex.join(["a b", "c"]))
print(fnmatch.filter(["a.py", "b.txt", "c.py"], "*.py"), fnmatch.fnmatch("Data.CSV", "*.csv"))
