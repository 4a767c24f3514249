def main():
    print("main ran with __name__ =", __name__)


if __name__ == "__main__":
    main()
else:
    print("imported")
