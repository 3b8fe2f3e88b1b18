import csv
import sys

totals: dict[str, int] = {}
for row in csv.DictReader(open(sys.argv[1])):
    totals[row["month"]] = totals.get(row["month"], 0) + int(row["cents"])
print({k: v for k, v in sorted(totals.items())})
