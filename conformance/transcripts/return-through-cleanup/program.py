class Cleanup:
    def __enter__(self):
        return self
    def __exit__(self, kind, value, traceback):
        print('cleanup saw', 'an error' if kind else 'no error')
with Cleanup():
    try:
        return 'returned'
    except BaseException:
        print('caught')
