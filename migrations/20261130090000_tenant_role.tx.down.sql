-- The role is shared by every database of the cluster, so it is not dropped
-- here: another database may still use it. Drop it by hand once no database
-- of the cluster holds CodeLotse tables.
SELECT 1;
