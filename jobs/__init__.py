"""parascout Spark jobs: one module per job, each a small subclass of jobs.base.Job."""
