def merge(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


print(merge([(1, 3), (2, 6), (8, 10), (15, 18), (17, 20)]))
print(merge([]))
