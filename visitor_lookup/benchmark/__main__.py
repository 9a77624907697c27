from visitor_lookup.benchmark.cli import main

main()
