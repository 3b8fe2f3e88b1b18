from harness_gate.cli import main

raise SystemExit(main())
