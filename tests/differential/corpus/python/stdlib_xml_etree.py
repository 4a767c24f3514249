import xml.etree.ElementTree as ET

doc = ET.fromstring("<catalog><book id='1'><title>Dune</title><price>9.99</price></book>"
                    "<book id='2'><title>Emma</title><price>4.50</price></book></catalog>")
for book in doc.findall("book"):
    print(book.get("id"), book.findtext("title"), float(book.findtext("price")))
root = ET.Element("root")
ET.SubElement(root, "child", name="x").text = "hi"
print(ET.tostring(root, encoding="unicode"))
