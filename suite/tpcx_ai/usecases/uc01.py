"""UC01, customer segmentation: KMeans (k=4) on each customer's return ratio and order frequency.

Features per customer (as the kit): `return_ratio`, the mean over the customer's orders of
returned value / order value (value = |scan count| x price of its line items; returned value
= returned quantity x product price), and `frequency`, the customer's orders per year of the
split's date span. MinMaxScaler, then KMeans(4, k-means++, n_init=10, max_iter=300,
random_state=0). No quality metric: `truth` returns None. Customers without orders have both
features 0. Columnar throughout (numpy bincount over line items, no per-row Python).
"""

KEYS = ["c_customer_sk"]
DEFAULTS = {"n_clusters": 4, "init": "k-means++", "n_init": 10, "max_iter": 300, "random_state": 0}


def features(data):
    """(customer ids, an (n, 2) array of [return_ratio, frequency])."""
    import numpy as np
    from suite.tpcx_ai.tables.retail import column, positions

    cust = column(data.arrow("customer", ["c_customer_sk"]), "c_customer_sk", np.int64)
    orders = data.arrow("order", ["o_order_id", "o_customer_sk", "o_date"])
    order_ids = column(orders, "o_order_id", np.int64)
    li = data.arrow("lineitem", ["li_order_id", "li_quantity", "li_price"])
    li_pos = positions(order_ids, column(li, "li_order_id"))
    ok = li_pos >= 0
    value = np.bincount(li_pos[ok], weights=(np.abs(column(li, "li_quantity", np.float64))
                                             * column(li, "li_price", np.float64))[ok],
                        minlength=len(order_ids))
    ret = data.arrow("order_returns", ["or_order_id", "or_product_id", "or_return_quantity"])
    prod = data.arrow("product", ["p_product_id", "p_price"])
    p_pos = positions(column(prod, "p_product_id"), column(ret, "or_product_id"))
    r_pos = positions(order_ids, column(ret, "or_order_id"))
    ok = (p_pos >= 0) & (r_pos >= 0)
    price = column(prod, "p_price", np.float64)
    returned = np.bincount(r_pos[ok], weights=column(ret, "or_return_quantity", np.float64)[ok] * price[p_pos[ok]],
                           minlength=len(order_ids))
    ratio = np.divide(returned, value, out=np.zeros_like(value), where=value > 0)
    c_pos = positions(cust, column(orders, "o_customer_sk"))
    ok = c_pos >= 0
    n_orders = np.bincount(c_pos[ok], minlength=len(cust)).astype(np.float64)
    ratio_sum = np.bincount(c_pos[ok], weights=ratio[ok], minlength=len(cust))
    days = column(orders, "o_date")
    years = (float(days.max() - days.min()) + 1.0) / 365.25 if len(days) else 1.0
    x = np.column_stack([np.divide(ratio_sum, n_orders, out=np.zeros_like(ratio_sum), where=n_orders > 0),
                         n_orders / years])
    return cust, x


def train(data, params, seed):
    from suite.tpcx_ai.tables.retail import quiet_openmp

    quiet_openmp()
    from sklearn.cluster import KMeans
    from sklearn.preprocessing import MinMaxScaler

    p = {**DEFAULTS, **(params or {})}
    _, x = features(data)
    scaler = MinMaxScaler().fit(x)
    km = KMeans(n_clusters=p["n_clusters"], init=p["init"], n_init=p["n_init"], max_iter=p["max_iter"],
                random_state=p["random_state"]).fit(scaler.transform(x))
    return {"scaler": scaler, "kmeans": km}


def serve(model, data, params):
    import pandas as pd

    cust, x = features(data)
    cluster = model["kmeans"].predict(model["scaler"].transform(x))
    return pd.DataFrame({"c_customer_sk": cust, "prediction": cluster.astype("int32")})


def truth(data):
    return None
