"""What this machine reports about itself: `status` (configuration, uploads waiting, damage) and `usage` (whether
memory is used here)."""
