"""UC03, weekly sales forecast per store x department: Holt-Winters per series (statsmodels).

Weekly sales of a (store, department) = sum of scan count x price of the line items of that
store's orders in that Monday-based week, whose product is in that department (order,
lineitem, product joined by position arrays and summed with one numpy bincount). The series
are the rows of `store_dept`. Training fits ExponentialSmoothing(seasonal='add',
seasonal_periods=52) on each series over the training weeks, and keeps its forecast profile:
with an additive season and no trend the forecast is periodic in 52 weeks, so the model is one
52-value profile per series (`forecast(h)` equals the profile tiled, checked by the tests).
Serving forecasts `sd_periods` weeks after the last training week for each `store_dept` row,
negatives clipped to 0. `truth` (scoring split) is the actual weekly sales of those weeks.
"""

KEYS = ["sd_store", "sd_department", "week"]
SEASON = 52
DEFAULTS = {"seasonal": "add", "seasonal_periods": SEASON, "initialization_method": "legacy-heuristic"}


def weeks_of(days):
    """Monday-based week number (weeks since Monday 1970-01-05) of days since 1970-01-01."""
    return (days - 4) // 7


def _series(data):
    """store_dept as (stores, departments, periods) arrays, departments as strings."""
    import numpy as np
    from suite.tpcx_ai.tables.retail import column

    sd = data.arrow("store_dept", ["sd_store", "sd_department", "sd_periods"])
    return (column(sd, "sd_store", np.int64), np.asarray(sd.column("sd_department").to_pylist(), dtype=object),
            column(sd, "sd_periods", np.int64))


def _lookup(stores, depts):
    """Codes of the series' stores and departments and the (store, dept) -> series table."""
    import numpy as np
    import pandas as pd

    store_codes = np.unique(stores)
    dept_codes = pd.Index(pd.unique(depts))
    lut = np.full((len(store_codes), len(dept_codes)), -1, dtype=np.int64)
    lut[np.searchsorted(store_codes, stores), dept_codes.get_indexer(depts)] = np.arange(len(stores))
    return store_codes, dept_codes, lut


def weekly_sales(data, stores, depts):
    """(first week, an (n_series, n_weeks) array of sales) of the given (store, dept) series."""
    import numpy as np
    from suite.tpcx_ai.tables.retail import column, positions

    orders = data.arrow("order", ["o_order_id", "o_store", "o_date"])
    week = weeks_of(column(orders, "o_date", np.int64))
    first, n_weeks = (int(week.min()), int(week.max() - week.min() + 1)) if len(week) else (0, 1)
    store_codes, dept_codes, lut = _lookup(stores, depts)
    o_store = column(orders, "o_store", np.int64)
    s_idx = np.minimum(np.searchsorted(store_codes, o_store), len(store_codes) - 1)
    s_idx[store_codes[s_idx] != o_store] = -1
    prod = data.arrow("product", ["p_product_id", "p_department"])
    p_dept = dept_codes.get_indexer(np.asarray(prod.column("p_department").to_pylist(), dtype=object))
    li = data.arrow("lineitem", ["li_order_id", "li_product_id", "li_quantity", "li_price"])
    amount = column(li, "li_quantity", np.float64) * column(li, "li_price", np.float64)
    o_pos = positions(column(orders, "o_order_id"), column(li, "li_order_id"))
    p_pos = positions(column(prod, "p_product_id"), column(li, "li_product_id"))
    ok = (o_pos >= 0) & (p_pos >= 0)
    o_pos, p_pos, amount = o_pos[ok], p_pos[ok], amount[ok]
    s, d = s_idx[o_pos], p_dept[p_pos]
    ok = (s >= 0) & (d >= 0)
    series = np.where(ok, lut[np.where(ok, s, 0), np.where(ok, d, 0)], -1)
    ok = series >= 0
    key = series[ok] * n_weeks + (week[o_pos[ok]] - first)
    sales = np.bincount(key, weights=amount[ok], minlength=len(stores) * n_weeks)
    return first, sales.reshape(len(stores), n_weeks)


def fit_profile(y, params):
    """The 52-week forecast profile of one series (Holt-Winters, additive season)."""
    import warnings

    import numpy as np
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    m = int(params["seasonal_periods"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = ExponentialSmoothing(np.asarray(y, dtype=np.float64), seasonal=params["seasonal"],
                                       seasonal_periods=m,
                                       initialization_method=params["initialization_method"]).fit()
            profile = np.asarray(res.forecast(m), dtype=np.float64)
        if np.all(np.isfinite(profile)):
            return profile
    except (ValueError, np.linalg.LinAlgError):  # too short or degenerate series
        pass
    return np.full(m, float(np.mean(y[-m:])) if len(y) else 0.0)  # fallback: last season's mean


def train(data, params, seed):
    import numpy as np

    p = {**DEFAULTS, **(params or {})}
    stores, depts, _ = _series(data)
    first, sales = weekly_sales(data, stores, depts)
    profiles = np.vstack([fit_profile(y, p) for y in sales]) if len(sales) else np.zeros((0, SEASON))
    return {"stores": stores, "departments": depts, "profiles": profiles,
            "last_week": first + sales.shape[1] - 1}


def serve(model, data, params):
    import numpy as np
    import pandas as pd

    stores, depts, periods = _series(data)
    _, dept_codes, lut = _lookup(model["stores"], model["departments"])
    store_codes = np.unique(model["stores"])
    s = np.minimum(np.searchsorted(store_codes, stores), len(store_codes) - 1)
    d = dept_codes.get_indexer(depts)
    known = (store_codes[s] == stores) & (d >= 0)
    idx = np.where(known, lut[s, np.where(d >= 0, d, 0)], -1)
    row = np.repeat(np.arange(len(stores)), periods)
    h = np.arange(len(row)) - np.repeat(np.cumsum(periods) - periods, periods)  # 0.. periods-1
    profiles = model["profiles"]
    m = profiles.shape[1]
    pred = np.where(idx[row] >= 0, profiles[np.maximum(idx[row], 0), h % m], 0.0)
    return pd.DataFrame({"sd_store": stores[row].astype("int32"), "sd_department": depts[row],
                         "week": (model["last_week"] + 1 + h).astype("int64"),
                         "prediction": np.clip(pred, 0.0, None)})


def truth(data):
    """Actual weekly sales of each store_dept series over the split's first `sd_periods` weeks."""
    import numpy as np
    import pandas as pd

    stores, depts, periods = _series(data)
    first, sales = weekly_sales(data, stores, depts)
    row = np.repeat(np.arange(len(stores)), periods)
    h = np.arange(len(row)) - np.repeat(np.cumsum(periods) - periods, periods)
    inside = h < sales.shape[1]
    label = np.where(inside, sales[row, np.minimum(h, sales.shape[1] - 1)], 0.0)
    return pd.DataFrame({"sd_store": stores[row].astype("int32"), "sd_department": depts[row],
                         "week": (first + h).astype("int64"), "label": np.clip(label, 0.0, None)})
