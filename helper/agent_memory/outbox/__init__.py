"""The outbox: every upload (a note, a skill publication) is planned on disk before any network call, and the plan
is removed only once the bucket has confirmed it (`plans`, `claims`, `delivery`, `listing`, `giving_up`)."""
