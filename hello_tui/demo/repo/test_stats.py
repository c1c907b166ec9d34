from stats import summary


def test_summary_mean():
    assert summary([1, 2, 3])["mean"] == 2.0


def test_summary_total():
    assert summary([1, 2, 3])["total"] == 6
