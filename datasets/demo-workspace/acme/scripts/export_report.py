"""Export the monthly sales report to CSV (utf-8-sig so Excel shows Cyrillic; ATL-1650)."""
import csv
import sys


def export(rows, path):
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["client", "amount", "stage"])
        for row in rows:  # ATL-1655: no more rows[:-1]
            writer.writerow(row)


if __name__ == "__main__":
    export([], sys.argv[1] if len(sys.argv) > 1 else "sales.csv")
