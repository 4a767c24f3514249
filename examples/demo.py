# A program as a model might write it: it calls the host's bindings
# (search, weather, add), prints as it goes, and returns a compact answer.
import asyncio

hits = await search("processes")
print(f"{len(hits)} documents about processes:", [h["title"] for h in hits])

cities = ["Paris", "Tokyo", "Atlantis"]
reports = await asyncio.gather(*(weather(c) for c in cities), return_exceptions=True)
for city, report in zip(cities, reports):
    if isinstance(report, BindingError):
        print(f"{city}: unavailable ({report.type})")
    else:
        print(f"{city}: {report['celsius']} °C, {report['sky']}")

known = [r for r in reports if not isinstance(r, BaseException)]
total = 0
for r in known:
    total = await add(total, r["celsius"])
return {"documents": len(hits), "mean_celsius": total / len(known)}
