import statistics as st

data = [2, 4, 4, 4, 5, 5, 7, 9]
print(st.mean(data), st.median(data), st.mode(data))
print(st.pstdev(data), round(st.stdev(data), 4), st.variance(data))
print(st.quantiles(data, n=4), st.median_low([1, 3, 5, 7]), st.fmean([1.5, 2.5]))
