"""agent-memory: portable memory and skills for personal coding agents."""

__version__ = "0.2.0"  # 0.2: the JSON of search and import names a cache's freshness `freshness` (was `sync`)
