# tprimat peak: panels from peak_bars.dat (peaks) and peak_steps.dat (every step),
# their names and titles from peak_labels.dat.
# Restyle freely, then: gnuplot -e 'fmt="png"' peak.gp (or fmt="svg").
if (!exists("fmt")) fmt = "png"
if (fmt eq "svg") {
  set terminal svg size 1800,1000 dynamic font "sans,10"
  set output "peak_throughput_analysis.svg"
} else {
  set terminal pngcairo size 1800,1000 font "sans,10"
  set output "peak_throughput_analysis.png"
}
set termoption noenhanced  # names hold underscores, not subscripts
# Every name, title and key comes from the data: read, never parsed as script.
title_text = ""
stats "peak_labels.dat" index 0 using (title_text = title_text . ($1 > 1 ? "\n" : "") . strcol(2), 0) nooutput
array bar_tick[2]
do for [i=1:2] { bar_tick[i] = "" }
stats "peak_labels.dat" index 1 using (bar_tick[int($1)] = bar_tick[int($1)] . ($2 > 1 ? "\n" : "") . strcol(3), 0) nooutput
array strip_tick[2]
do for [i=1:2] { strip_tick[i] = "" }
stats "peak_labels.dat" index 2 using (strip_tick[int($1)] = strip_tick[int($1)] . ($2 > 1 ? "\n" : "") . strcol(3), 0) nooutput
set datafile missing "NaN"
set grid ytics
bar_value(v) = abs(v) >= 1000 ? sprintf("%.0f", v) : sprintf("%.3g", v)
set style fill solid 0.8 border -1
set multiplot layout 2,3 title title_text font ",11"
set bmargin 4
set xrange [-0.5:1.5]
set xtics () norotate font ",9"
do for [i=1:2] { set xtics add (bar_tick[i] i-1) }
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set title "Peak throughput (tokens/s)"
plot "peak_bars.dat" using 1:3:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:3:(bar_value($3) . ($10 > 0 ? " (!)" : "")) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Peak compute (TFLOP/s, all GPUs)"
plot "peak_bars.dat" using 1:4:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:4:(bar_value($4) . ($10 > 0 ? " (!)" : "")) with labels offset 0,0.7 font ",9" notitle
unset label
set title "MFU (% of the dense peak)"
plot "peak_bars.dat" using 1:5:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:5:(bar_value($5) . ($10 > 0 ? " (!)" : "")) with labels offset 0,0.7 font ",9" notitle
unset label
set bmargin 4
set title "Per-GPU throughput (tokens/s/GPU)"
plot "peak_bars.dat" using 1:6:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:6:(bar_value($6) . ($10 > 0 ? " (!)" : "")) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Step time at peak (s)"
plot "peak_bars.dat" using 1:8:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:8:(bar_value($8) . ($10 > 0 ? " (!)" : "")) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Step time of every measured step (s), per configuration; bar: mean"
set xrange [-0.5:1.5]
set xtics () norotate font ",9"
do for [i=1:2] { set xtics add (strip_tick[i] i-1) }
set autoscale y
set offsets 0, 0, graph 0.08, graph 0.08
set yrange [0<*:*]
plot "peak_steps.dat" index 0 using 1:2:3 with points pt 7 ps 1.2 lc rgb variable notitle, \
     "" index 1 using 1:2:3:(0) with vectors nohead lw 2 lc rgb "black" notitle
unset multiplot
