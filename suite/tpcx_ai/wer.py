"""Word error rate as the TPCx-AI kit scores UC02 (speech to text).

WER = (sum over utterances of the word-level Levenshtein distance between reference and
hypothesis) / (sum over utterances of the reference's word count). Words are the
whitespace-separated tokens; substitutions, insertions and deletions each cost 1.
"""


def word_distance(reference: list, hypothesis: list) -> int:
    """Levenshtein distance between two word sequences (one row of the table at a time)."""
    if len(reference) < len(hypothesis):
        reference, hypothesis = hypothesis, reference
    previous = list(range(len(hypothesis) + 1))
    for i, ref_word in enumerate(reference, 1):
        current = [i]
        for j, hyp_word in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ref_word != hyp_word)))
        previous = current
    return previous[-1]


def _words(text) -> list:
    if text is None or (isinstance(text, float) and text != text):  # None or NaN: no words
        return []
    return str(text).split()


def word_error_rate(y_true, y_pred) -> float:
    """Corpus WER of hypotheses `y_pred` against references `y_true` (same length, in order).

    Raises ValueError when the lengths differ or the references hold no words at all.
    """
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"word_error_rate: {len(y_true)} references but {len(y_pred)} hypotheses")
    errors = words = 0
    for ref, hyp in zip(y_true, y_pred):
        ref_words = _words(ref)
        errors += word_distance(ref_words, _words(hyp))
        words += len(ref_words)
    if words == 0:
        raise ValueError("word_error_rate: the references hold no words")
    return errors / words
