def main():
    raise SystemExit("mlwarp-opt: not yet")
