from harness_gate.entry import main

raise SystemExit(main())
