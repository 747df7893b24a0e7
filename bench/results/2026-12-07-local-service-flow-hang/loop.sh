#!/bin/bash
cd /work/main
i=0
end=$(( $(date +%s) + ${DUR:-900} ))
while [ $(date +%s) -lt $end ]; do
  i=$((i+1))
  d=/tmp/an/sf$1-$i
  /usr/bin/python3 tests/service/test-service-flow.py build/daemon/stereod client/python $d > $d.out 2>&1 &
  tp=$!
  t=0
  while kill -0 $tp 2>/dev/null; do
    sleep 1; t=$((t+1))
    if [ $t -eq 35 ]; then
      sp=$(pgrep -P $tp stereod)
      [ -n "$sp" ] && gdb -p $sp -batch -ex "thread apply all bt" > $d.gdb 2>&1
    fi
  done
  wait $tp; rc=$?
  if [ $rc -ne 0 ]; then echo "run $1-$i rc $rc" >> /tmp/an/fails.txt; mkdir -p /tmp/an/keep-$1-$i; cp -r $d $d.out $d.gdb /tmp/an/keep-$1-$i/ 2>/dev/null; fi
  rm -rf $d $d.out $d.gdb
  echo "$1-$i $rc" >> /tmp/an/runs.txt
done
