#!/usr/bin/env bash
# make_inputs.sh MINIMODEL DIR: hostile input files for the reliability.input.*
# tests, generated rather than committed (binary garbage, 2 MB, a truncated
# restart file).
set -eu
mm="$1"; dir="$2"
rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
# configuration files
printf '\x89PNG\r\n\x1a\n\xff\xfe\xfd binary \x80\x81 garbage\n\xc3\x28\n' > garbage.ini
printf 'ELF\x00\x01\x02\x00\x00[run]\nsteps = 1\n' > garbage_nul.ini
: > empty.ini
{ for ((i = 0; i < 2 * 1024 * 1024 / 64; i++)); do
    printf '; %061d\n' "$i"
  done; } > big.ini                         # 2 MiB of comment lines
printf '[run]\nname = %s\n' "$(printf 'x%.0s' $(seq 1 300))" > long_line.ini
printf '[run]\r\nsteps = 7\r\n[grid]\r\nnx = 8\r\n' > crlf.ini
printf '\xef\xbb\xbf[run]\nsteps = 7\n' > bom.ini
mkdir dir.ini
# input NetCDF files
: > empty.nc
head -c 3000 garbage.ini big.ini > garbage.nc
printf 'CDF\x01\x00\x00\x00\x00\x00\x00\x00\x0a\xff\xff\xff\xff' > classic_header.nc
# a classic header that declares 2^20 + 1 dimensions, in a file (9 MiB, sparse)
# that could hold them
printf 'CDF\x01\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x10\x00\x01' > classic_many_dims.nc
truncate -s 9M classic_many_dims.nc
mkdir dir.nc
printf '[run]\nname = valid\nsteps = 2\n[grid]\nnx = 24\nny = 18\nnz = 12\n[output]\ndir = %s\nrestart_interval = 2\n' \
  "$dir" > valid.ini
OMPI_MCA_rmaps_base_oversubscribe=1 "$mm" --quiet valid.ini > make_inputs.log 2>&1 || { cat make_inputs.log; exit 1; }
size=$(stat -c %s valid.restart.nc)
head -c $((size / 2)) valid.restart.nc > truncated.restart.nc
# the same restart with temp packed (scale_factor): the stored values would be
# read as the field
ncdump valid.restart.nc | sed 's/^\t\ttemp:units = "degC" ;$/&\n\t\ttemp:scale_factor = 0.5 ;/' |
  ncgen -k nc4 -o packed.restart.nc
ncdump -h packed.restart.nc | grep -q 'temp:scale_factor = 0.5' || { echo "packed.restart.nc: no scale_factor"; exit 1; }
# ... and with step = 2.5 (a double), which reads as 2 when taken as an integer
ncdump valid.restart.nc | sed 's/^\t\t:step = 2LL ;$/\t\t:step = 2.5 ;/' | ncgen -k nc4 -o step_half.restart.nc
ncdump -h step_half.restart.nc | grep -q ':step = 2.5 ;' || { echo "step_half.restart.nc: no step 2.5"; exit 1; }
ncdump valid.restart.nc | sed 's/^\t\t:step = 2LL ;$/\t\t:step = NaN ;/' | ncgen -k nc4 -o step_nan.restart.nc
ncdump -h step_nan.restart.nc | grep -q ':step = NaN ;' || { echo "step_nan.restart.nc: no step NaN"; exit 1; }
# ... and with step = 1, its time that of step 2 (every digit of the fields
# kept: their checksums hold): the state relabelled
ncdump -p 9,17 valid.restart.nc | sed 's/^\t\t:step = 2LL ;$/\t\t:step = 1LL ;/' | ncgen -k nc4 -o step_edited.restart.nc
ncdump -h step_edited.restart.nc | grep -q ':step = 1LL ;' || { echo "step_edited.restart.nc: no step 1"; exit 1; }
# ... and as it was, through text (ncdump with every digit, ncgen): accepted
ncdump -p 9,17 valid.restart.nc | ncgen -k nc4 -o text.restart.nc
echo "ok: inputs in $dir"
