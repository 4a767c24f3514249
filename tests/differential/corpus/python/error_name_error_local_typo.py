def summarize(records):
    number_of_records = len(records)
    return number_of_record


summarize([1])
