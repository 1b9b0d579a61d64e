"""``schedperf compare``: two sides (git refs, scheduler configurations or recorded results)
measured the same way, then judged by reports.stats."""
