import html
from urllib.parse import parse_qs, quote, urlencode, urljoin, urlparse

print(html.escape('<a href="x">Tom & Jerry</a>'), html.unescape("&lt;b&gt; &amp; &#x263A;"))
u = urlparse("https://user@example.com:8080/path/page?q=1&x=a+b#frag")
print(u.scheme, u.hostname, u.port, u.path, parse_qs(u.query), u.fragment)
print(urlencode({"q": "tea & cake", "n": 2}), quote("a b/c"), urljoin("http://a/b/c", "../d"))
