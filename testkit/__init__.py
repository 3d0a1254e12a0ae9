"""What tests and benchmarks both build on: synthetic archives, sites and URL sets, small servers, and the reference
implementations a benchmark measures against and a test holds the product to. Neither a test nor a benchmark, so each
may import it; not part of the installed package."""
