import unittest

from stats import summary


class SummaryTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(summary([1, 2, 3])["mean"], 2.0)

    def test_total(self):
        self.assertEqual(summary([1, 2, 3])["total"], 6)


if __name__ == "__main__":
    unittest.main()
