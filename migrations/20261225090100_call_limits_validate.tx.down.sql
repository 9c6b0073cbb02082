-- Nothing to undo: a validated constraint is the previous migration's.
SELECT 1;
