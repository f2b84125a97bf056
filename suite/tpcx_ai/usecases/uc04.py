"""UC04: spam detection in product reviews, as the kit does it.

CountVectorizer(stop_words='english', ngram_range=(1, 2)) -> TfidfTransformer -> MultinomialNB,
fitted on the review text; the prediction is the spam class (1) or not (0).
"""

KEYS = ["review_id"]


def train(data, params, seed):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import Pipeline

    frame = data.table("review", columns=["text", "spam"])
    model = Pipeline([
        ("count", CountVectorizer(stop_words=params.get("stop_words", "english"),
                                  ngram_range=tuple(params.get("ngram_range", (1, 2))))),
        ("tfidf", TfidfTransformer()),
        ("nb", MultinomialNB(alpha=float(params.get("alpha", 1.0)))),
    ])
    model.fit(frame["text"].fillna(""), frame["spam"].astype("int64"))
    return model


def serve(model, data, params):
    frame = data.table("review", columns=KEYS + ["text"])
    out = frame[KEYS].copy()
    out["prediction"] = model.predict(frame["text"].fillna("")).astype("int64")
    return out


def truth(data):
    frame = data.table("review", columns=KEYS + ["spam"])
    return frame.rename(columns={"spam": "label"}).astype({"label": "int64"})
