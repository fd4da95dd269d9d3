"""Cost per million generated tokens from a machine's hourly price and its measured throughput."""


def cost_per_million(price_per_hour: float, tokens_per_second: float) -> float:
    """Price of one million tokens when the machine generates tokens_per_second and is fully used."""
    return price_per_hour / (tokens_per_second * 3600) * 1_000_000


if __name__ == "__main__":
    # Example figures only: put in your price and the throughput you measured at your concurrency.
    for tokens_per_second in (20, 100, 500):
        print(f"{tokens_per_second:>4} tokens/s at $1.00/hour: ${cost_per_million(1.00, tokens_per_second):.2f} "
              "per million tokens")
