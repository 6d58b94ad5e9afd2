"""Loads an exported release folder with the community's own libraries and
compares every table with the release's CSV/JSON files.

Usage: hf_release_check.py FOLDER UNPACKED_RELEASE SPEC_JSON

SPEC_JSON maps a table to the export it must equal:
{"ground_truth": {"csv": "ground_truth.csv", "lists": {"annotators": " "}},
 "items": {"jsonl": "raw/items.jsonl"}}
Prints one JSON object: table -> rows, and the checks run.
"""

import csv
import datetime
import json
import os
import subprocess
import sys

import datasets
import mlcroissant as mlc
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

folder, unpacked, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
datasets.disable_progress_bars()

# The card's YAML header: one config per table, each a Parquet file.
card = open(os.path.join(folder, "README.md"), encoding="utf-8").read()
assert card.startswith("---\n"), "the card starts with its YAML header"
header = yaml.safe_load(card.split("---\n")[1])
for key in ["license", "pretty_name", "task_categories", "size_categories", "language", "configs"]:
    assert header.get(key), f"the card's header has {key}"
configs = {c["config_name"]: c["data_files"][0]["path"] for c in header["configs"]}
on_disk = sorted(f[: -len(".parquet")] for f in os.listdir(os.path.join(folder, "data")))
assert sorted(configs) == on_disk, (configs, on_disk)
assert sum(1 for c in header["configs"] if c.get("default")) == 1, "one default config"

croissant = json.load(open(os.path.join(folder, "croissant.json"), encoding="utf-8"))
record_sets = {rs["name"]: rs for rs in croissant["recordSet"]}
assert sorted(record_sets) == sorted(configs), (sorted(record_sets), sorted(configs))

ARROW = {
    "sc:Text": pa.string(),
    "sc:Integer": pa.int64(),
    "sc:Float": pa.float64(),
    "sc:Boolean": pa.bool_(),
    "sc:DateTime": pa.timestamp("us", tz="UTC"),
}


def declared_type(field):
    t = ARROW[field["dataType"]]
    return pa.list_(t) if field.get("repeated") else t


def from_csv(cell, field, separator):
    """A CSV cell as the declared type (the CSV neutralises formulas with a leading ')."""
    if len(cell) > 1 and cell[0] == "'" and cell[1] in "=+-@\t\r":
        cell = cell[1:]
    if field.get("repeated"):
        items = [] if cell == "" else cell.split(separator)
        return [int(v) for v in items] if field["dataType"] == "sc:Integer" else items
    if cell == "" or (cell == "null" and field["dataType"] == "sc:Float"):
        return None
    return {
        "sc:Text": lambda c: c,
        "sc:Integer": int,
        "sc:Float": float,
        "sc:Boolean": lambda c: {"true": True, "false": False}[c],
        "sc:DateTime": lambda c: datetime.datetime.fromisoformat(c.replace("Z", "+00:00")),
    }[field["dataType"]](cell)


def plain(v):
    """A value mlcroissant or pandas gives, as Python's own."""
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, pd.Timestamp):
        return v.to_pydatetime()
    if hasattr(v, "tolist"):
        return plain(v.tolist())
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, float) and v != v:
        return None
    return v


report = {}
for name, path in configs.items():
    fields = record_sets[name]["field"]
    columns = [f["name"] for f in fields]
    file = os.path.join(folder, path)

    # The Hub's loader, by folder and config, and by Parquet file: same rows, declared types.
    try:
        by_folder = datasets.load_dataset(folder, name, split="train")
    except Exception as e:
        raise AssertionError(f"table {name}: {e}") from e
    by_file = datasets.load_dataset("parquet", data_files=file, split="train")
    assert by_folder.column_names == columns, (name, by_folder.column_names, columns)
    assert by_folder.features == by_file.features and len(by_folder) == len(by_file), name
    schema = by_folder.data.schema
    for f in fields:
        got = schema.field(f["name"]).type
        want = declared_type(f)
        same = got == want or (pa.types.is_list(got) and got.value_type == want.value_type)
        assert same, (name, f["name"], str(got), str(want))
    rows = by_folder.to_list()
    assert rows == by_file.to_list(), name
    if any(c.get("default") and c["config_name"] == name for c in header["configs"]):
        assert datasets.load_dataset(folder, split="train").to_list() == rows, "the default config loads by folder alone"

    # pandas reads every file.
    frame = pd.read_parquet(file)
    assert list(frame.columns) == columns and len(frame) == len(rows), name

    # The rows of the matching export.
    want = spec.get(name)
    if want and "csv" in want:
        with open(os.path.join(unpacked, want["csv"]), newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            csv_header = next(reader)
            exported = list(reader)
        assert csv_header == columns, (name, csv_header, columns)
        lists = want.get("lists", {})
        expected = [
            {c: from_csv(cell, fld, lists.get(c, " ")) for c, cell, fld in zip(columns, row, fields)}
            for row in exported
        ]
        assert len(rows) == len(expected), (name, len(rows), len(expected))
        for n, (got, exp) in enumerate(zip(rows, expected)):
            assert got == exp, (name, n, got, exp)
    elif want and "jsonl" in want:
        lines = [json.loads(l) for l in open(os.path.join(unpacked, want["jsonl"]), encoding="utf-8") if l.strip()]
        assert [r["item"] for r in rows] == [l["external_id"] for l in lines], name
        assert [json.loads(r["payload"]) for r in rows] == [l["payload"] for l in lines], name
        assert [None if r["gold"] is None else json.loads(r["gold"]) for r in rows] == [l["gold"] for l in lines], name
    elif want and "json" in want:
        # A list of objects in a JSON export, compared on the columns named (table column -> key).
        objects = json.load(open(os.path.join(unpacked, want["json"]), encoding="utf-8"))
        for key in want["path"]:
            objects = objects[key]
        assert len(rows) == len(objects), (name, len(rows), len(objects))
        for n, (row, obj) in enumerate(zip(rows, objects)):
            for column, key in want["columns"].items():
                assert row[column] == obj[key], (name, n, column, row[column], obj[key])
    else:
        raise AssertionError(f"no export named for table {name}")
    report[name] = len(rows)

# Croissant: the validator passes, and each record set yields the Parquet file's rows.
validator = os.path.join(os.path.dirname(sys.executable), "mlcroissant")
jsonld = os.path.join(folder, "croissant.json")
run = subprocess.run([validator, "validate", "--jsonld", jsonld], capture_output=True, text=True)
assert run.returncode == 0, run.stdout + run.stderr
dataset = mlc.Dataset(jsonld)
for name, path in configs.items():
    table = pq.read_table(os.path.join(folder, path)).to_pylist()
    records = list(dataset.records(name))
    assert len(records) == len(table), (name, len(records), len(table))
    for n, (record, row) in enumerate(zip(records, table)):
        got = {k.split("/", 1)[1]: plain(v) for k, v in record.items()}
        exp = {k: plain(v) for k, v in row.items()}
        assert got == exp, (name, n, got, exp)

print(json.dumps(report), flush=True)
# Every check above passed. Leave without the interpreter's teardown: the
# libraries' worker threads (mlcroissant, pyarrow) have been seen to abort
# there (SIGABRT, "terminate called without an active exception") after the
# report was printed, once in several runs.
sys.stderr.flush()
os._exit(0)
