"""The retail tables: customer, product, store_dept, order, lineitem, order_returns.

They feed UC01 (customer segmentation), UC03 (weekly sales forecast per store x department)
and UC08 (trip-type classification). Row counts follow `spec.row_drivers(sf)`: orders (the
main table, chunked by `spec.CHUNK_ROWS`), ~6.5 line items per order, order_returns ~10% of
orders, customers, stores. Every split has the whole customer base (its orders are ~10% of the
training orders over ~10% of the weeks, so a customer's order rate is the same in every split,
which UC01's frequency needs). Minimums of this module: 68 departments (the kit's UC08
columns) with at least 10 products each (680 products), 100 customers, 1000 orders per split.

The population shared by all splits comes from `spec.rng(seed, "retail", "population", ...)`:
- departments: a price level (spread over ~3 decades so series levels differ widely) and a
  popularity; products: a department and a price;
- stores: a size; store x department series: a level, a trend and a 52-week season
  (two harmonics and a year-end bump), which tilt the department a line item falls in;
- trip types (the Walmart set of 38, type 14 very rare): a frequency, a preferred department
  mix, preferred weekdays, a basket size and a share of returned scans (type 999 mostly
  returns), all mixed with a common background so baskets are informative but noisy.
Customers of a split (a segment, an order rate, a return propensity) come from
`spec.rng(seed, "retail", split, "customers")`, and every chunk draw from
`spec.rng(seed, "retail", split, "chunk", chunk, ...)`.

Time: training orders fall in weeks [0, W) (W = the reference's `weeks`, 104 at SF <= 1),
serving and scoring orders in the P = round(0.1 W) weeks after, [W, W + P): UC03 trains on
the training weeks and forecasts the next P (`store_dept.sd_periods`), scored against the
scoring split's actual sales. The weekly order volume follows a shared season, and order
ids are dense (1..N in date order). Line items carry the scan count (`li_quantity`, negative
for a scan returned during the visit, as in the Walmart trip-type data) and the unit price.
"""

import datetime
import math

from suite.tpcx_ai import spec

NAME = "retail"
BASE_DATE = datetime.date(2019, 1, 7)  # a Monday: week w starts on BASE_DATE + 7 w days
N_SEGMENTS = 4

DEPARTMENTS = (
    "accessories", "automotive", "baby care", "bakery", "bath and shower", "beauty", "bedding",
    "books and magazines", "boys wear", "bras and shapewear", "camera and supplies",
    "candy, tobacco, cookies", "celebration", "comm bread", "concept stores", "cook and dine",
    "dairy", "dsd grocery", "electronics", "fabrics and crafts", "financial services",
    "frozen foods", "furniture", "girls wear", "grocery dry goods", "hardware",
    "health and beauty aids", "home decor", "home management", "horticulture and acc",
    "household chemicals", "household paper goods", "impulse merchandise", "infant apparel",
    "infant consumable hardlines", "jewelry and sunglasses", "ladies socks", "ladieswear",
    "large household goods", "lawn and garden", "liquor, wine, beer", "meat - fresh and frozen",
    "media and gaming", "mens wear", "menswear", "office supplies", "optical - frames",
    "optical - lenses", "other departments", "paint and accessories", "personal care",
    "pets and supplies", "pharmacy otc", "pharmacy rx", "players and electronics", "plus and maternity",
    "pre packed deli", "produce", "seafood", "seasonal", "service deli", "sheer hosiery",
    "shoes", "sleepwear and foundations", "sporting goods", "swimwear and outerwear", "toys",
    "wireless",
)
TRIP_TYPES = (3, 4, 5, 6, 7, 8, 9, 12, 14, 15) + tuple(range(18, 45)) + (999,)
RARE_TRIP = 14  # the kit drops it from UC08 (too few samples)
RETURN_TRIP = 999
TRIP_MIX = (0.4, 0.6)  # share of a trip type's department mix that is the common background
SERIES_CORE = 8  # departments every store_dept lists (UC03's well-counted, widely spread series)


def _label(t):
    import pyarrow as pa
    return pa.field(t[0], t[1], metadata={b"label": b"1"})


def schemas():
    import pyarrow as pa
    return {
        "customer": pa.schema([("c_customer_sk", pa.int64()), ("c_birth_year", pa.int16())]),
        "product": pa.schema([("p_product_id", pa.int64()), ("p_name", pa.string()),
                              ("p_department", pa.string()), ("p_price", pa.float64())]),
        "store_dept": pa.schema([("sd_store", pa.int32()), ("sd_department", pa.string()),
                                 ("sd_periods", pa.int32())]),
        "order": pa.schema([("o_order_id", pa.int64()), ("o_customer_sk", pa.int64()),
                            ("o_store", pa.int32()), ("o_date", pa.date32()),
                            _label(("o_trip_type", pa.int32()))]),
        "lineitem": pa.schema([("li_order_id", pa.int64()), ("li_product_id", pa.int64()),
                               ("li_quantity", pa.int32()), ("li_price", pa.float64())]),
        "order_returns": pa.schema([("or_order_id", pa.int64()), ("or_product_id", pa.int64()),
                                    ("or_return_quantity", pa.int32())]),
    }


# ---------------------------------------------------------------- sizes and calendar

def sizes(sf: float, split: str) -> dict:
    """Row counts and the week window of a split."""
    d = spec.row_drivers(sf)
    weeks = int(d["weeks"])
    periods = max(1, int(round(weeks * spec.SERVING_FRACTION)))
    first = 0 if split == "training" else weeks
    return {
        "orders": spec.split_rows(d["orders"], split, minimum=1000),
        "customers": max(100, int(round(d["customers"]))),  # every split: the whole customer base
        "returns_per_order": d["order_returns"] / d["orders"],
        "lineitems_per_order": d["lineitems_per_order"],
        "products": max(10 * len(DEPARTMENTS), int(round(d["products"]))),
        "stores": max(1, int(round(d["stores"]))),
        "series_departments": series_departments(sf),
        "weeks": weeks, "periods": periods,
        "first_week": first, "n_weeks": weeks if split == "training" else periods,
    }


def chunks(sf: float, split: str) -> int:
    return max(1, math.ceil(sizes(sf, split)["orders"] / spec.CHUNK_ROWS))


def table_rows(sf: float, split: str) -> dict[str, int]:
    """The row counts the sizing fixes (line items and returns are drawn per order)."""
    sz = sizes(sf, split)
    return {"order": sz["orders"], "customer": sz["customers"], "product": sz["products"],
            "store_dept": sz["stores"] * sz["series_departments"]}


def week_start_days(week):
    """Days since 1970-01-01 of the Monday starting `week` (numpy-friendly)."""
    return (BASE_DATE - datetime.date(1970, 1, 1)).days + 7 * week


# ---------------------------------------------------------------- the population

def _season(r, n_series, weeks):
    """Multiplicative 52-week seasons, (n_series, len(weeks)) around 1."""
    import numpy as np
    w = np.asarray(weeks, dtype=np.float64)[None, :]
    a1 = r.uniform(0.10, 0.35, (n_series, 1))
    a2 = r.uniform(0.0, 0.12, (n_series, 1))
    p1 = r.uniform(0, 2 * np.pi, (n_series, 1))
    p2 = r.uniform(0, 2 * np.pi, (n_series, 1))
    bump = r.uniform(0.0, 0.5, (n_series, 1))
    yearend = np.exp(-0.5 * ((np.mod(w, 52) - 49.0) / 1.5) ** 2)
    return (1 + a1 * np.sin(2 * np.pi * w / 52 + p1) + a2 * np.sin(4 * np.pi * w / 52 + p2)
            + bump * yearend)


def _population_departments(seed):
    """Department log price levels, item shares, and the order UC03's series take them in.

    The first SERIES_CORE departments of that order are in every store_dept: their price
    levels span $0.20..$600 and they hold most items, so their weekly sales are well counted
    even at a tiny SF and their levels differ by ~4 decades (a constant forecast fails UC03's
    MSLE threshold). The others: prices around $8 (log sd 1.7) and the rest of the items.
    """
    import numpy as np
    from statistics import NormalDist
    nd = len(DEPARTMENTS)
    r = spec.rng(seed, NAME, "population", "departments")
    z = np.array([NormalDist().inv_cdf((i + 0.5) / nd) for i in range(nd)])  # normal quantiles
    order = r.permutation(nd)
    core = order[:SERIES_CORE]
    log_price = np.log(8.0) + 1.7 * r.permutation(z)
    log_price[core] = r.permutation(np.linspace(np.log(0.2), np.log(600.0), SERIES_CORE))
    pop = np.exp(0.5 * r.permutation(z))
    pop[core] = 0.0
    pop *= 0.3 / pop.sum()
    pop[core] = 0.7 / SERIES_CORE
    return log_price, pop, order


def series_departments(sf: float):
    """How many departments (in `_population_departments` order) store_dept lists at an SF."""
    k = int(round(spec.row_drivers(sf)["departments"]))
    return min(len(DEPARTMENTS), max(SERIES_CORE, k))


def _population_products(seed, n_products):
    import numpy as np
    nd = len(DEPARTMENTS)
    log_price, pop, _ = _population_departments(seed)
    rp = spec.rng(seed, NAME, "population", "products")
    extra = rp.choice(nd, size=n_products - 10 * nd, p=pop)
    dept = np.sort(np.concatenate([np.repeat(np.arange(nd), 10), extra]))
    price = np.round(np.exp(log_price[dept] + 0.35 * rp.standard_normal(n_products)), 2)
    return {"dept": dept, "price": np.maximum(price, 0.05)}


def _population_trips(seed):
    import numpy as np
    nd, nt = len(DEPARTMENTS), len(TRIP_TYPES)
    _, pop, _ = _population_departments(seed)
    r = spec.rng(seed, NAME, "population", "trips")
    freq = np.exp(0.6 * r.standard_normal(nt))
    freq[TRIP_TYPES.index(RARE_TRIP)] = 1e-4 * freq.sum()
    freq /= freq.sum()
    core = np.zeros((nt, nd))
    for t in range(nt):  # 38 trip types: a small loop over the population, not over rows
        k = r.integers(2, 6)
        core[t, r.choice(nd, size=k, replace=False)] = r.dirichlet(np.full(k, 2.0))
    mix = r.uniform(*TRIP_MIX, (nt, 1))
    pref = (1 - mix) * core + mix * pop[None, :]
    weekday = np.ones((nt, 7)) + 4.0 * r.dirichlet(np.full(7, 0.3), size=nt)
    weekday /= weekday.sum(axis=1, keepdims=True)
    size = np.exp(0.55 * r.standard_normal(nt))
    ret = TRIP_TYPES.index(RETURN_TRIP)
    size[ret] = 0.0
    size *= (6.5 - 1) / (freq @ size)
    size[ret] = 0.5  # return trips: one or two items, mostly scanned back
    neg = np.full(nt, 0.01)
    neg[ret] = 0.85
    return {"freq": freq, "pref": pref, "weekday": weekday, "size": size, "neg": neg}


def _population_series(seed, n_stores, weeks):
    """Store sizes and the store x department factor over `weeks`, (stores, depts, weeks)."""
    import numpy as np
    nd = len(DEPARTMENTS)
    r = spec.rng(seed, NAME, "population", "stores")
    store_size = np.exp(0.6 * r.standard_normal(n_stores))
    rs = spec.rng(seed, NAME, "population", "series")
    n = n_stores * nd
    level = np.exp(0.5 * rs.standard_normal(n))[:, None]
    trend = rs.normal(0.0, 0.12, n)[:, None]
    season = _season(rs, n, np.arange(weeks[-1] + 1))[:, np.asarray(weeks)]
    w = np.asarray(weeks, dtype=np.float64)[None, :]
    factor = level * np.exp(trend * w / 52.0) * np.maximum(season, 0.05)
    return store_size, factor.reshape(n_stores, nd, len(weeks))


def _weekly_volume(seed, first, n_weeks):
    import numpy as np
    r = spec.rng(seed, NAME, "population", "volume")
    vol = _season(r, 1, np.arange(first + n_weeks))[0, first:]
    return vol * np.exp(0.05 * np.arange(first, first + n_weeks) / 52.0)


def _customers(seed, split, n):
    import numpy as np
    r = spec.rng(seed, NAME, split, "customers")
    seg = r.integers(0, N_SEGMENTS, n)
    seg_rate = np.array([0.4, 1.0, 2.2, 1.0])
    seg_return = np.array([0.3, 0.5, 0.8, 4.0])
    rate = seg_rate[seg] * np.exp(0.3 * r.standard_normal(n))
    ret = seg_return[seg] * np.exp(0.3 * r.standard_normal(n))
    ret /= ret @ rate / rate.sum()  # mean propensity 1 per order
    birth = r.integers(1940, 2005, n).astype(np.int16)
    return {"rate": rate, "ret": ret, "birth": birth}


# ---------------------------------------------------------------- chunk generation

def _offset_choice(cdf, rows, u):
    """For each i, the column where row `rows[i]` of the row-wise CDF table passes `u[i]`."""
    import numpy as np
    k = cdf.shape[1]
    c = cdf / cdf[:, -1:]
    c[:, -1] = 1.0
    flat = (c + np.arange(c.shape[0])[:, None]).ravel()
    idx = np.searchsorted(flat, rows + u, side="right")
    return np.minimum(idx - rows * k, k - 1)


def _dimension_tables(seed, sz):
    import numpy as np
    import pyarrow as pa
    prod = _population_products(seed, sz["products"])
    n = sz["products"]
    ids = np.arange(1, n + 1, dtype=np.int64)
    names = [f"{DEPARTMENTS[d]} item {i}" for i, d in zip(ids.tolist(), prod["dept"].tolist())]
    product = pa.table({"p_product_id": ids, "p_name": names,
                        "p_department": [DEPARTMENTS[d] for d in prod["dept"].tolist()],
                        "p_price": prod["price"]})
    ns, k = sz["stores"], sz["series_departments"]
    _, _, order = _population_departments(seed)
    store_dept = pa.table({
        "sd_store": np.repeat(np.arange(1, ns + 1, dtype=np.int32), k),
        "sd_department": [DEPARTMENTS[d] for d in order[:k].tolist()] * ns,
        "sd_periods": np.full(ns * k, sz["periods"], dtype=np.int32)})
    return product, store_dept


def _customer_table(seed, split, sz):
    import numpy as np
    import pyarrow as pa
    cust = _customers(seed, split, sz["customers"])
    return pa.table({"c_customer_sk": np.arange(1, sz["customers"] + 1, dtype=np.int64),
                     "c_birth_year": cust["birth"]})


def _orders(seed, split, sz, chunk, r):
    """The chunk's orders: ids, week, weekday, store, trip, customer (numpy arrays)."""
    import numpy as np
    n_all = sz["orders"]
    lo = chunk * spec.CHUNK_ROWS
    hi = min(n_all, lo + spec.CHUNK_ROWS)
    idx = np.arange(lo, hi, dtype=np.int64)
    vol = _weekly_volume(seed, sz["first_week"], sz["n_weeks"])
    cum = np.cumsum(vol) / vol.sum()
    week = sz["first_week"] + np.minimum(np.searchsorted(cum, (idx + 0.5) / n_all), sz["n_weeks"] - 1)
    trips = _population_trips(seed)
    store_size, _ = _population_series(seed, sz["stores"], [0])
    n = hi - lo
    store = np.searchsorted(np.cumsum(store_size) / store_size.sum(), r.random(n), side="right")
    store = np.minimum(store, sz["stores"] - 1)
    trip = np.minimum(np.searchsorted(np.cumsum(trips["freq"]), r.random(n), side="right"), len(TRIP_TYPES) - 1)
    weekday = _offset_choice(np.cumsum(trips["weekday"], axis=1), trip, r.random(n))
    cust = _customers(seed, split, sz["customers"])
    cum_rate = np.cumsum(cust["rate"]) / cust["rate"].sum()
    customer = np.minimum(np.searchsorted(cum_rate, r.random(n), side="right"), sz["customers"] - 1)
    return {"id": idx + 1, "week": week, "weekday": weekday, "store": store, "trip": trip,
            "customer": customer, "trips": trips, "ret": cust["ret"]}


def _lineitems(seed, sz, o, r):
    """The chunk's line items: order position, department, product, scan count, price."""
    import numpy as np
    trips = o["trips"]
    n_items = 1 + r.poisson(trips["size"][o["trip"]])
    pos = np.repeat(np.arange(len(o["id"])), n_items)
    w0, w1 = int(o["week"].min()), int(o["week"].max())
    _, factor = _population_series(seed, sz["stores"], list(range(w0, w1 + 1)))
    # weights[(trip, store, week)] over departments = trip preference x series factor
    weights = trips["pref"][:, None, None, :] * factor.transpose(0, 2, 1)[None, :, :, :]
    nt, ns, nw, nd = weights.shape
    row = ((o["trip"][pos] * ns + o["store"][pos]) * nw + (o["week"][pos] - w0)).astype(np.int64)
    dept = _offset_choice(np.cumsum(weights.reshape(-1, nd), axis=1), row, r.random(len(pos)))
    prod = _population_products(seed, sz["products"])
    counts = np.bincount(prod["dept"], minlength=nd)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    product = starts[dept] + (r.random(len(pos)) * counts[dept]).astype(np.int64)
    qty = r.geometric(0.65, len(pos)).astype(np.int32)
    neg = r.random(len(pos)) < trips["neg"][o["trip"][pos]]
    qty[neg] = -qty[neg]
    return {"pos": pos, "product": product, "qty": qty, "price": prod["price"][product]}


def _returns(sz, o, li, r):
    """Returned line items: more for customers with a high return propensity."""
    import numpy as np
    p = sz["returns_per_order"] / sz["lineitems_per_order"] * o["ret"][o["customer"][li["pos"]]]
    hit = (r.random(len(li["pos"])) < p) & (li["qty"] > 0)
    qty = li["qty"][hit]
    back = 1 + (r.random(len(qty)) * qty).astype(np.int32)
    return {"pos": li["pos"][hit], "product": li["product"][hit], "qty": back.astype(np.int32)}


def generate(sf: float, split: str, seed: int, chunk: int) -> dict:
    import numpy as np
    import pyarrow as pa
    sz = sizes(sf, split)
    r = spec.rng(seed, NAME, split, "chunk", chunk)
    o = _orders(seed, split, sz, chunk, r)
    li = _lineitems(seed, sz, o, r)
    ret = _returns(sz, o, li, r)
    trip_values = np.asarray(TRIP_TYPES, dtype=np.int32)
    days = week_start_days(o["week"]) + o["weekday"]
    out = {
        "order": pa.table({"o_order_id": o["id"], "o_customer_sk": o["customer"] + 1,
                           "o_store": (o["store"] + 1).astype(np.int32),
                           "o_date": pa.array(days.astype(np.int32), pa.date32()),
                           "o_trip_type": trip_values[o["trip"]]}),
        "lineitem": pa.table({"li_order_id": o["id"][li["pos"]], "li_product_id": li["product"] + 1,
                              "li_quantity": li["qty"], "li_price": li["price"]}),
        "order_returns": pa.table({"or_order_id": o["id"][ret["pos"]],
                                   "or_product_id": ret["product"] + 1,
                                   "or_return_quantity": ret["qty"]}),
    }
    if chunk == 0:
        out["product"], out["store_dept"] = _dimension_tables(seed, sz)
        out["customer"] = _customer_table(seed, split, sz)
    schemas_ = schemas()
    return {name: table.cast(schemas_[name]) for name, table in out.items()}


# ---------------------------------------------------------------- helpers for the use cases

def quiet_openmp():
    """Idle OpenMP threads sleep instead of spinning (before sklearn/xgboost load libgomp; an
    explicit OMP_WAIT_POLICY wins): on a shared, oversubscribed 2-core host the spinning
    threads made xgboost 6x and KMeans many times slower."""
    import os

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def column(table, name, dtype=None):
    """A pyarrow table's column as one numpy array (dates as int32 days since 1970)."""
    import pyarrow as pa
    col = table.column(name)
    if pa.types.is_date32(col.type):
        col = col.cast(pa.int32())
    arr = col.to_numpy()
    return arr if dtype is None else arr.astype(dtype, copy=False)


def positions(ids, keys):
    """Row position in `ids` (unique) of each key, -1 where absent; dense ranges take a fast path."""
    import numpy as np
    ids = np.asarray(ids, dtype=np.int64)
    keys = np.asarray(keys, dtype=np.int64)
    if len(ids) and ids[-1] - ids[0] + 1 == len(ids) and bool(np.all(np.diff(ids) == 1)):
        pos = keys - ids[0]
        return np.where((pos >= 0) & (pos < len(ids)), pos, -1)
    import pandas as pd
    return pd.Index(ids).get_indexer(keys)


GROUP = spec.TableGroup(
    name=NAME, schemas=schemas, chunks=chunks, generate=generate, rows=table_rows,
    description="retail: customers, products, stores x departments, orders, line items, returns "
                "(UC01, UC03, UC08)")
